//! Records to rows: which event writes what, folded per entity into a [`Batch`].
//!
//! Only events change what is stored; commands and rejections pass. Each event yields the
//! whole row its value describes, with NULL where the event does not know a cell (an element's
//! start date is only on ELEMENT_ACTIVATING): folding and the upsert keep what is there.

use std::collections::HashMap;
use std::sync::Arc;

use beeline_protocol::value::{
    DecisionEvaluationRecord, DecisionRecord, DecisionRequirementsRecord, FormRecord,
    IncidentRecord, JobBatchRecord, JobRecord, ProcessInstanceCreationRecord,
    ProcessInstanceRecord, ProcessRecord, UserTaskRecord, VariableRecord,
};
use beeline_protocol::{Record, ValueType};

use crate::rows::{Batch, Value, index};

/// Names a process definition lends its instances and elements.
#[derive(Debug, Default, Clone)]
pub struct DefinitionNames {
    pub name: Option<String>,
    pub version_tag: String,
    /// Element id -> name, for the elements that have one.
    pub elements: HashMap<String, String>,
    /// The form linked to the process's none start event (`zeebe:formDefinition formId`).
    pub start_form: Option<StartForm>,
}

/// A start event's linked form: which form, and which of its versions (`bindingType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartForm {
    pub form_id: String,
    /// `latest`, `deployment` or `versionTag`.
    pub binding: &'static str,
    pub version_tag: Option<String>,
}

impl DefinitionNames {
    /// Reads the names from a process's BPMN XML (the process with `bpmn_process_id`).
    pub fn from_xml(xml: &[u8], bpmn_process_id: &str, version_tag: &str) -> Self {
        let mut names = DefinitionNames {
            version_tag: version_tag.to_owned(),
            ..Self::default()
        };
        // A deployed definition parsed at deployment; a parse failure here only costs names.
        if let Ok(definitions) = beeline_bpmn::parse(xml)
            && let Some(process) = definitions
                .processes
                .iter()
                .find(|p| p.bpmn_process_id == bpmn_process_id)
        {
            names.name = process.name.clone();
            names.start_form = start_form(process);
            for element in process.elements() {
                if let Some(name) = &element.name {
                    names.elements.insert(element.id.clone(), name.clone());
                }
            }
        }
        names
    }
}

/// The form a process's none start event links by `formId` (a `formKey` names a form the
/// application renders itself, which the form endpoints do not serve).
fn start_form(process: &beeline_bpmn::model::Process) -> Option<StartForm> {
    use beeline_bpmn::model::{BindingType, ElementData};
    let start = process.root().scope.as_ref()?.none_start_event?;
    let ElementData::StartEvent(event) = &process.element(start)?.data else {
        return None;
    };
    let form = event.form.as_ref()?;
    Some(StartForm {
        form_id: form.form_id.clone()?,
        binding: match form.binding_type {
            BindingType::Latest => "latest",
            BindingType::Deployment => "deployment",
            BindingType::VersionTag => "versionTag",
        },
        version_tag: form.version_tag.clone(),
    })
}

/// The process definitions a partition's exporter knows, shared by the partitions' folds.
pub type Definitions = Arc<std::sync::RwLock<HashMap<i64, Arc<DefinitionNames>>>>;

/// Folds one partition's records into rows.
pub struct Projection {
    definitions: Definitions,
}

impl Projection {
    pub fn new(definitions: Definitions) -> Self {
        Self { definitions }
    }

    fn names(&self, definition: i64) -> Option<Arc<DefinitionNames>> {
        self.definitions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&definition)
            .cloned()
    }

    /// Folds `record` into `batch`.
    pub fn fold(&self, record: &Record, batch: &mut Batch) {
        batch.position = batch.position.max(record.position);
        batch.oldest = batch.oldest.min(record.timestamp);
        if !record.is_event() {
            return;
        }
        let intent = record.intent.name();
        match record.value_type() {
            ValueType::Process => {
                if let Some(process) = record.value_as::<ProcessRecord>() {
                    self.process(record, process, intent, batch);
                }
            }
            ValueType::ProcessInstance => {
                if let Some(element) = record.value_as::<ProcessInstanceRecord>() {
                    self.element(record, element, intent, batch);
                }
            }
            ValueType::Variable => {
                if let Some(variable) = record.value_as::<VariableRecord>() {
                    variable_row(record, variable, batch);
                }
            }
            ValueType::Incident => {
                if let Some(incident) = record.value_as::<IncidentRecord>() {
                    incident_row(record, incident, intent, batch);
                }
            }
            ValueType::Job => {
                if let Some(job) = record.value_as::<JobRecord>() {
                    job_row(record, record.key, job, job_state(intent), batch);
                }
            }
            ValueType::JobBatch if intent == "ACTIVATED" => {
                if let Some(jobs) = record.value_as::<JobBatchRecord>() {
                    for (key, job) in jobs.job_keys.iter().zip(&jobs.jobs) {
                        job_row(record, *key, job, None, batch);
                    }
                }
            }
            ValueType::Decision if intent == "CREATED" => {
                if let Some(decision) = record.value_as::<DecisionRecord>() {
                    decision_row(record, decision, batch);
                }
            }
            ValueType::DecisionRequirements if intent == "CREATED" => {
                if let Some(drg) = record.value_as::<DecisionRequirementsRecord>() {
                    requirements_row(record, drg, batch);
                }
            }
            ValueType::DecisionEvaluation => {
                if let Some(evaluation) = record.value_as::<DecisionEvaluationRecord>() {
                    evaluation_rows(record, evaluation, intent, batch);
                }
            }
            ValueType::ProcessInstanceCreation if intent == "CREATED" => {
                if let Some(creation) = record.value_as::<ProcessInstanceCreationRecord>()
                    && !creation.tags.is_empty()
                {
                    tags_row(record, creation, batch);
                }
            }
            ValueType::UserTask => {
                if let Some(task) = record.value_as::<UserTaskRecord>() {
                    self.user_task(record, task, intent, batch);
                }
            }
            ValueType::Form if intent == "CREATED" || intent == "DELETED" => {
                if let Some(form) = record.value_as::<FormRecord>() {
                    form_row(record, form, intent == "DELETED", batch);
                }
            }
            _ => {}
        }
    }

    fn process(&self, record: &Record, process: &ProcessRecord, intent: &str, batch: &mut Batch) {
        if intent != "CREATED" {
            return;
        }
        let names = Arc::new(DefinitionNames::from_xml(
            &process.resource,
            &process.bpmn_process_id,
            &process.version_tag,
        ));
        self.definitions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(process.process_definition_key, names.clone());
        let start_form = names.start_form.as_ref();
        batch.fold(
            index::PROCESS_DEFINITION,
            vec![
                Value::Int(process.process_definition_key),
                Value::text(&process.bpmn_process_id),
                names.name.clone().map_or(Value::Null, Value::Text),
                Value::Int(i64::from(process.version)),
                optional(&process.version_tag),
                Value::text(&process.resource_name),
                Value::text(&process.tenant_id),
                Value::Text(String::from_utf8_lossy(&process.resource).into_owned()),
                Value::Int(i64::from(record.partition_id)),
                Value::Int(record.position),
                Value::Int(process.deployment_key),
                start_form.map_or(Value::Null, |f| Value::text(&f.form_id)),
                start_form.map_or(Value::Null, |f| Value::text(f.binding)),
                start_form
                    .and_then(|f| f.version_tag.as_deref())
                    .map_or(Value::Null, Value::text),
            ],
        );
    }

    fn element(
        &self,
        record: &Record,
        element: &ProcessInstanceRecord,
        intent: &str,
        batch: &mut Batch,
    ) {
        let names = self.names(element.process_definition_key);
        let common = |batch: &mut Batch, table: usize, row: Vec<Value>| batch.fold(table, row);
        if intent == "SEQUENCE_FLOW_TAKEN" {
            common(
                batch,
                index::SEQUENCE_FLOW,
                vec![
                    Value::Int(element.process_instance_key),
                    Value::text(&element.element_id),
                    Value::Int(element.process_definition_key),
                    Value::text(&element.bpmn_process_id),
                    Value::text(&element.tenant_id),
                    Value::Int(i64::from(record.partition_id)),
                    Value::Int(record.position),
                ],
            );
            return;
        }
        let (state, start, end) = match intent {
            "ELEMENT_ACTIVATING" => ("ACTIVE", Value::Int(record.timestamp), Value::Null),
            "ELEMENT_ACTIVATED" | "ELEMENT_COMPLETING" | "ELEMENT_TERMINATING" => {
                ("ACTIVE", Value::Null, Value::Null)
            }
            "ELEMENT_COMPLETED" => ("COMPLETED", Value::Null, Value::Int(record.timestamp)),
            "ELEMENT_TERMINATED" => ("TERMINATED", Value::Null, Value::Int(record.timestamp)),
            _ => return,
        };
        let element_name = names
            .as_ref()
            .and_then(|n| n.elements.get(&element.element_id).cloned())
            .unwrap_or_else(|| element.element_id.clone());
        common(
            batch,
            index::ELEMENT_INSTANCE,
            vec![
                Value::Int(record.key),
                Value::Int(element.process_instance_key),
                Value::Int(element.process_definition_key),
                Value::text(&element.bpmn_process_id),
                Value::text(&element.element_id),
                Value::Text(element_name),
                Value::text(&element.bpmn_element_type),
                Value::text(state),
                start.clone(),
                end.clone(),
                Value::key(element.flow_scope_key),
                Value::text(&element.tenant_id),
                Value::Int(i64::from(record.partition_id)),
                Value::Int(record.position),
            ],
        );
        if element.bpmn_element_type == "PROCESS" && record.key == element.process_instance_key {
            common(
                batch,
                index::PROCESS_INSTANCE,
                vec![
                    Value::Int(record.key),
                    Value::text(&element.bpmn_process_id),
                    Value::Int(element.process_definition_key),
                    Value::Int(i64::from(element.version)),
                    names
                        .as_ref()
                        .map_or(Value::Null, |n| optional(&n.version_tag)),
                    names
                        .as_ref()
                        .and_then(|n| n.name.clone())
                        .map_or(Value::Null, Value::Text),
                    Value::text(state),
                    start,
                    end,
                    Value::key(element.parent_process_instance_key),
                    Value::key(element.parent_element_instance_key),
                    Value::text(&element.tenant_id),
                    Value::Null,
                    Value::Int(i64::from(record.partition_id)),
                    Value::Int(record.position),
                ],
            );
        }
    }
}

impl Projection {
    /// A user task's row: every event carries the whole task, so each writes every cell but
    /// the dates it does not set (an empty assignee, `-1` for a cleared date: see the
    /// entity's expressions).
    fn user_task(&self, record: &Record, task: &UserTaskRecord, intent: &str, batch: &mut Batch) {
        let state = match intent {
            "CREATING" => "CREATING",
            "ASSIGNING" | "CLAIMING" => "ASSIGNING",
            "UPDATING" => "UPDATING",
            "COMPLETING" => "COMPLETING",
            "COMPLETED" => "COMPLETED",
            "CANCELING" => "CANCELING",
            "CANCELED" => "CANCELED",
            "CREATED" | "ASSIGNED" | "UPDATED" | "COMPLETION_DENIED" | "ASSIGNMENT_DENIED"
            | "UPDATE_DENIED" => "CREATED",
            "CORRECTED" | "MIGRATED" => "",
            _ => return,
        };
        let names = self.names(task.process_definition_key);
        let list = |items: &[String]| {
            Value::Text(serde_json::to_string(items).unwrap_or_else(|_| "[]".into()))
        };
        let date = |text: &str| Value::Int(zoned_date(text).unwrap_or(-1));
        batch.fold(
            index::USER_TASK,
            vec![
                Value::Int(record.key),
                Value::text(&task.element_id),
                names
                    .as_ref()
                    .and_then(|n| n.elements.get(&task.element_id).cloned())
                    .map_or_else(|| Value::text(&task.element_id), Value::Text),
                if state.is_empty() {
                    Value::Null
                } else {
                    Value::text(state)
                },
                Value::text(&task.assignee),
                list(&task.candidate_groups_list),
                list(&task.candidate_users_list),
                date(&task.due_date),
                date(&task.follow_up_date),
                if task.creation_timestamp > 0 {
                    Value::Int(task.creation_timestamp)
                } else if intent == "CREATING" {
                    Value::Int(record.timestamp)
                } else {
                    Value::Null
                },
                if matches!(intent, "COMPLETED" | "CANCELED") {
                    Value::Int(record.timestamp)
                } else {
                    Value::Null
                },
                Value::Int(i64::from(task.priority)),
                Value::key(task.form_key),
                optional(&task.external_form_reference),
                Value::Text(
                    serde_json::to_string(&task.custom_headers).unwrap_or_else(|_| "{}".into()),
                ),
                Value::Int(task.process_definition_key),
                Value::text(&task.bpmn_process_id),
                names
                    .as_ref()
                    .and_then(|n| n.name.clone())
                    .map_or(Value::Null, Value::Text),
                Value::Int(i64::from(task.process_definition_version)),
                Value::Int(task.process_instance_key),
                Value::Int(task.element_instance_key),
                Value::text(&task.tenant_id),
                Value::Int(i64::from(record.partition_id)),
                Value::Int(record.position),
            ],
        );
    }
}

/// An instance's tags, given at its creation: its row with them and nothing else.
fn tags_row(record: &Record, creation: &ProcessInstanceCreationRecord, batch: &mut Batch) {
    let mut row = vec![Value::Null; crate::rows::PROCESS_INSTANCE.columns.len()];
    row[0] = Value::Int(creation.process_instance_key);
    let column = |name| crate::rows::PROCESS_INSTANCE.column(name).unwrap_or(0);
    row[column("tags")] =
        Value::Text(serde_json::to_string(&creation.tags).unwrap_or_else(|_| "[]".into()));
    row[column("partition_id")] = Value::Int(i64::from(record.partition_id));
    row[column("position")] = Value::Int(record.position);
    batch.fold(index::PROCESS_INSTANCE, row);
}

/// Epoch milliseconds of a date-time as Zeebe prints a zoned one (`2023-11-20T17:30Z`, seconds
/// left out when zero, the zone's name in brackets after the offset); `None` when empty or
/// not a date.
fn zoned_date(text: &str) -> Option<i64> {
    let text = text.split('[').next().unwrap_or_default();
    let without_seconds = text.len() > 16 && text.as_bytes()[16] != b':';
    if without_seconds && text.is_char_boundary(16) {
        crate::time::parse(&format!("{}:00{}", &text[..16], &text[16..]))
    } else {
        crate::time::parse(text)
    }
}

/// Text that is absent when empty (a version tag nobody set).
fn optional(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else {
        Value::text(text)
    }
}

fn variable_row(record: &Record, variable: &VariableRecord, batch: &mut Batch) {
    batch.fold(
        index::VARIABLE,
        vec![
            Value::Int(record.key),
            Value::text(&variable.name),
            Value::text(&variable.value),
            Value::Int(variable.scope_key),
            Value::Int(variable.process_instance_key),
            Value::key(variable.process_definition_key),
            Value::text(&variable.bpmn_process_id),
            Value::text(&variable.tenant_id),
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

fn incident_row(record: &Record, incident: &IncidentRecord, intent: &str, batch: &mut Batch) {
    let (state, created) = match intent {
        "CREATED" => ("ACTIVE", Value::Int(record.timestamp)),
        "RESOLVED" => ("RESOLVED", Value::Null),
        "MIGRATED" => ("MIGRATED", Value::Null),
        _ => return,
    };
    batch.fold(
        index::INCIDENT,
        vec![
            Value::Int(record.key),
            Value::text(&incident.error_type),
            Value::text(&incident.error_message),
            Value::text(state),
            created,
            Value::text(&incident.bpmn_process_id),
            Value::Int(incident.process_definition_key),
            Value::Int(incident.process_instance_key),
            Value::text(&incident.element_id),
            Value::Int(incident.element_instance_key),
            Value::key(incident.job_key),
            Value::text(&incident.tenant_id),
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

/// The job state an event leaves (`None`: the event does not change it).
fn job_state(intent: &str) -> Option<&'static str> {
    Some(match intent {
        "CREATED" | "YIELDED" | "RECURRED_AFTER_BACKOFF" => "CREATED",
        "COMPLETED" => "COMPLETED",
        "FAILED" => "FAILED",
        "TIMED_OUT" => "TIMED_OUT",
        "ERROR_THROWN" => "ERROR_THROWN",
        "RETRIES_UPDATED" => "RETRIES_UPDATED",
        "CANCELED" => "CANCELED",
        "MIGRATED" => "MIGRATED",
        _ => return None,
    })
}

fn job_row(record: &Record, key: i64, job: &JobRecord, state: Option<&str>, batch: &mut Batch) {
    let ended = matches!(state, Some("COMPLETED" | "ERROR_THROWN" | "CANCELED"));
    let headers = serde_json::to_string(&job.custom_headers).unwrap_or_else(|_| "{}".into());
    let kind = if job.job_kind.is_empty() {
        "BPMN_ELEMENT"
    } else {
        &job.job_kind
    };
    let listener = if job.job_listener_event_type.is_empty() {
        "UNSPECIFIED"
    } else {
        &job.job_listener_event_type
    };
    batch.fold(
        index::JOB,
        vec![
            Value::Int(key),
            Value::text(&job.r#type),
            Value::text(&job.worker),
            state.map_or(Value::Null, Value::text),
            Value::text(kind),
            Value::text(listener),
            Value::Int(i64::from(job.retries)),
            Value::text(&job.error_message),
            Value::text(&job.error_code),
            if job.deadline > 0 {
                Value::Int(job.deadline)
            } else {
                Value::Null
            },
            if ended {
                Value::Int(record.timestamp)
            } else {
                Value::Null
            },
            Value::Text(headers),
            Value::Int(job.process_definition_key),
            Value::text(&job.bpmn_process_id),
            Value::Int(job.process_instance_key),
            Value::text(&job.element_id),
            Value::Int(job.element_instance_key),
            Value::text(&job.tenant_id),
            match state {
                Some("FAILED") => Value::bool(job.retries > 0),
                _ => Value::Null,
            },
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

fn decision_row(record: &Record, decision: &DecisionRecord, batch: &mut Batch) {
    batch.fold(
        index::DECISION_DEFINITION,
        vec![
            Value::Int(decision.decision_key),
            Value::text(&decision.decision_id),
            Value::text(&decision.decision_name),
            Value::Int(i64::from(decision.version)),
            optional(&decision.version_tag),
            Value::Int(decision.decision_requirements_key),
            Value::text(&decision.decision_requirements_id),
            Value::text(&decision.tenant_id),
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

fn requirements_row(record: &Record, drg: &DecisionRequirementsRecord, batch: &mut Batch) {
    batch.fold(
        index::DECISION_REQUIREMENTS,
        vec![
            Value::Int(drg.decision_requirements_key),
            Value::text(&drg.decision_requirements_id),
            Value::text(&drg.decision_requirements_name),
            Value::Int(i64::from(drg.decision_requirements_version)),
            Value::text(&drg.resource_name),
            Value::Text(String::from_utf8_lossy(&drg.resource).into_owned()),
            Value::text(&drg.tenant_id),
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

fn evaluation_rows(
    record: &Record,
    evaluation: &DecisionEvaluationRecord,
    intent: &str,
    batch: &mut Batch,
) {
    let failed = intent == "FAILED";
    for (n, decision) in evaluation.evaluated_decisions.iter().enumerate() {
        let failed_here = failed && decision.decision_id == evaluation.failed_decision_id;
        let inputs: Vec<serde_json::Value> = decision
            .evaluated_inputs
            .iter()
            .map(|i| {
                serde_json::json!({
                    "inputId": i.input_id, "inputName": i.input_name, "inputValue": i.input_value
                })
            })
            .collect();
        let rules: Vec<serde_json::Value> = decision
            .matched_rules
            .iter()
            .map(|r| {
                serde_json::json!({
                    "ruleId": r.rule_id, "ruleIndex": r.rule_index,
                    "evaluatedOutputs": r.evaluated_outputs.iter().map(|o| serde_json::json!({
                        "outputId": o.output_id, "outputName": o.output_name, "outputValue": o.output_value
                    })).collect::<Vec<_>>()
                })
            })
            .collect();
        batch.fold(
            index::DECISION_INSTANCE,
            vec![
                Value::Text(format!("{}-{}", record.key, n + 1)),
                Value::Int(record.key),
                Value::text(if failed_here { "FAILED" } else { "EVALUATED" }),
                Value::Int(record.timestamp),
                Value::text(if failed_here {
                    evaluation.evaluation_failure_message.as_str()
                } else {
                    ""
                }),
                Value::text(&decision.decision_id),
                Value::Int(decision.decision_key),
                Value::text(&decision.decision_name),
                Value::Int(i64::from(decision.decision_version)),
                Value::text(&decision.decision_type),
                Value::Int(evaluation.decision_requirements_key),
                Value::text(&evaluation.decision_requirements_id),
                Value::Int(evaluation.decision_key),
                Value::text(&decision.decision_output),
                Value::Text(serde_json::Value::Array(inputs).to_string()),
                Value::Text(serde_json::Value::Array(rules).to_string()),
                Value::key(evaluation.process_definition_key),
                Value::key(evaluation.process_instance_key),
                Value::key(evaluation.element_instance_key),
                Value::text(&evaluation.element_id),
                Value::text(&evaluation.tenant_id),
                Value::Int(i64::from(record.partition_id)),
                Value::Int(record.position),
            ],
        );
    }
}

/// A deployed form: its schema (the form's JSON) as text. A deleted form keeps its row,
/// marked, so that nothing resolves to it any more.
fn form_row(record: &Record, form: &FormRecord, deleted: bool, batch: &mut Batch) {
    batch.fold(
        index::FORM,
        vec![
            Value::Int(form.form_key),
            Value::text(&form.form_id),
            Value::Int(i64::from(form.version)),
            optional(&form.version_tag),
            Value::text(&form.resource_name),
            if deleted {
                Value::Null
            } else {
                Value::Text(String::from_utf8_lossy(&form.resource).into_owned())
            },
            Value::text(&form.tenant_id),
            Value::Int(form.deployment_key),
            Value::Int(i64::from(deleted)),
            Value::Int(i64::from(record.partition_id)),
            Value::Int(record.position),
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::intent::ProcessInstanceIntent;

    fn element(intent: ProcessInstanceIntent, position: i64, at: i64) -> Record {
        let mut record = Record::event(
            7,
            intent,
            ProcessInstanceRecord {
                bpmn_process_id: "p".into(),
                process_instance_key: 7,
                process_definition_key: 3,
                element_id: "p".into(),
                bpmn_element_type: "PROCESS".into(),
                flow_scope_key: -1,
                ..Default::default()
            },
        );
        record.position = position;
        record.timestamp = at;
        record
    }

    #[test]
    fn zoned_dates_read_as_zeebe_prints_them() {
        assert_eq!(zoned_date("1970-01-01T00:01Z"), Some(60_000));
        assert_eq!(zoned_date("1970-01-01T01:01+01:00"), Some(60_000));
        assert_eq!(
            zoned_date("1970-01-01T01:01:30+01:00[Europe/Paris]"),
            Some(90_000)
        );
        assert_eq!(zoned_date(""), None);
        assert_eq!(zoned_date("tomorrow"), None);
    }

    #[test]
    fn an_instance_that_starts_and_ends_in_one_flush_is_one_row_with_both_dates() {
        let projection = Projection::new(Definitions::default());
        let mut batch = Batch::new();
        for (n, intent) in [
            ProcessInstanceIntent::ElementActivating,
            ProcessInstanceIntent::ElementActivated,
            ProcessInstanceIntent::ElementCompleting,
            ProcessInstanceIntent::ElementCompleted,
        ]
        .into_iter()
        .enumerate()
        {
            projection.fold(&element(intent, n as i64 + 1, 100 + n as i64), &mut batch);
        }
        assert_eq!(batch.tables[index::PROCESS_INSTANCE].len(), 1);
        assert_eq!(batch.tables[index::ELEMENT_INSTANCE].len(), 1);
        let row = &batch.tables[index::PROCESS_INSTANCE][&vec![Value::Int(7)]];
        assert_eq!(row[6], Value::text("COMPLETED"));
        assert_eq!(row[7], Value::Int(100));
        assert_eq!(row[8], Value::Int(103));
        assert_eq!(row[14], Value::Int(4));
        assert_eq!(batch.position, 4);
    }
}
