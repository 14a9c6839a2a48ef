//! What a user task's properties evaluate to when it is activated (Zeebe's
//! `BpmnUserTaskBehavior`): its assignee, candidate groups and users, due and follow-up dates
//! (as Zeebe prints a zoned date-time), the form it links (by id and binding type), an external
//! form reference and its priority. Camunda user tasks keep them in their USER_TASK record;
//! job-worker user tasks hand them to their job as Zeebe's reserved headers.

use std::collections::BTreeMap;

use beeline_bpmn::{BindingType, ExprOrStatic, FeelSource, UserTask};
use beeline_feel::Value;
use beeline_feel::temporal::DateTime;
use beeline_protocol::value::UserTaskRecord;

use super::variables::eval;
use crate::expression::{type_name, wrong_type};
use crate::processing::bpmn::{BpmnElementContext, ErrorType, Failure, Step};

/// The job type of a job-worker user task.
pub(crate) const USER_TASK_JOB_TYPE: &str = "io.camunda.zeebe:userTask";
/// Zeebe's reserved job headers of job-worker user tasks.
pub(crate) const ASSIGNEE_HEADER: &str = "io.camunda.zeebe:assignee";
pub(crate) const CANDIDATE_GROUPS_HEADER: &str = "io.camunda.zeebe:candidateGroups";
pub(crate) const CANDIDATE_USERS_HEADER: &str = "io.camunda.zeebe:candidateUsers";
pub(crate) const DUE_DATE_HEADER: &str = "io.camunda.zeebe:dueDate";
pub(crate) const FOLLOW_UP_DATE_HEADER: &str = "io.camunda.zeebe:followUpDate";
pub(crate) const FORM_KEY_HEADER: &str = "io.camunda.zeebe:formKey";
pub(crate) const ACTION_HEADER: &str = "io.camunda.zeebe:action";
pub(crate) const CHANGED_ATTRIBUTES_HEADER: &str = "io.camunda.zeebe:changedAttributes";
pub(crate) const PRIORITY_HEADER: &str = "io.camunda.zeebe:priority";
pub(crate) const USER_TASK_KEY_HEADER: &str = "io.camunda.zeebe:userTaskKey";

/// The attributes of a user task that updates change and listeners correct, as records name
/// them in `changedAttributes`, in the order Zeebe lists them.
pub(crate) const ATTRIBUTES: [&str; 6] = [
    "assignee",
    "candidateGroupsList",
    "candidateUsersList",
    "dueDate",
    "followUpDate",
    "priority",
];

/// Whether `attribute` of `a` and `b` differ.
pub(crate) fn differs(a: &UserTaskRecord, b: &UserTaskRecord, attribute: &str) -> bool {
    match attribute {
        "assignee" => a.assignee != b.assignee,
        "candidateGroupsList" => a.candidate_groups_list != b.candidate_groups_list,
        "candidateUsersList" => a.candidate_users_list != b.candidate_users_list,
        "dueDate" => a.due_date != b.due_date,
        "followUpDate" => a.follow_up_date != b.follow_up_date,
        "priority" => a.priority != b.priority,
        _ => false,
    }
}

/// Gives `task` the value of `attribute` that `from` has.
pub(crate) fn copy_attribute(task: &mut UserTaskRecord, from: &UserTaskRecord, attribute: &str) {
    match attribute {
        "assignee" => task.assignee = from.assignee.clone(),
        "candidateGroupsList" => task.candidate_groups_list = from.candidate_groups_list.clone(),
        "candidateUsersList" => task.candidate_users_list = from.candidate_users_list.clone(),
        "dueDate" => task.due_date = from.due_date.clone(),
        "followUpDate" => task.follow_up_date = from.follow_up_date.clone(),
        "priority" => task.priority = from.priority,
        _ => {}
    }
}

/// The attributes in which `after` differs from `before`.
pub(crate) fn diff(before: &UserTaskRecord, after: &UserTaskRecord) -> Vec<String> {
    ATTRIBUTES
        .iter()
        .filter(|attribute| differs(before, after, attribute))
        .map(|attribute| attribute.to_string())
        .collect()
}

/// The headers of a task listener's job: the task's own headers, and its attributes in
/// Zeebe's reserved headers (what the gateway gives workers as the job's `userTask`).
pub(crate) fn listener_headers(
    task: &UserTaskRecord,
    changed_attributes: &[String],
) -> BTreeMap<String, String> {
    let mut headers = task.custom_headers.clone();
    let mut set = |name: &str, value: String| {
        if !value.is_empty() {
            headers.insert(name.to_string(), value);
        }
    };
    set(ACTION_HEADER, task.action.clone());
    if !changed_attributes.is_empty() {
        let mut sorted = changed_attributes.to_vec();
        sorted.sort();
        set(CHANGED_ATTRIBUTES_HEADER, list_literal(&sorted));
    }
    if task.priority > 0 {
        set(PRIORITY_HEADER, task.priority.to_string());
    }
    if task.user_task_key > 0 {
        set(USER_TASK_KEY_HEADER, task.user_task_key.to_string());
    }
    set(ASSIGNEE_HEADER, task.assignee.clone());
    if !task.candidate_groups_list.is_empty() {
        set(
            CANDIDATE_GROUPS_HEADER,
            list_literal(&task.candidate_groups_list),
        );
    }
    if !task.candidate_users_list.is_empty() {
        set(
            CANDIDATE_USERS_HEADER,
            list_literal(&task.candidate_users_list),
        );
    }
    set(DUE_DATE_HEADER, task.due_date.clone());
    set(FOLLOW_UP_DATE_HEADER, task.follow_up_date.clone());
    if task.form_key > 0 {
        set(FORM_KEY_HEADER, task.form_key.to_string());
    }
    headers
}

/// A user task's properties, evaluated.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct UserTaskProperties {
    pub assignee: String,
    pub candidate_groups: Vec<String>,
    pub candidate_users: Vec<String>,
    pub due_date: String,
    pub follow_up_date: String,
    /// The key of the linked form (`zeebe:formDefinition formId`), or -1.
    pub form_key: i64,
    pub external_form_reference: String,
    pub priority: i32,
}

/// Zeebe's default priority of a user task.
const DEFAULT_PRIORITY: i32 = 50;

fn extract_value_error(message: String) -> Failure {
    Failure::Incident(ErrorType::ExtractValueError, message)
}

/// Evaluates the properties of the user task `task` in the element instance's scope.
pub(crate) fn evaluate(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    task: &UserTask,
) -> Step<UserTaskProperties> {
    let assignment = &task.assignment;
    let mut properties = UserTaskProperties {
        form_key: -1,
        priority: DEFAULT_PRIORITY,
        ..Default::default()
    };
    if let Some(assignee) = &assignment.assignee {
        properties.assignee = string(bpmn, assignee)?;
    }
    if let Some(groups) = &assignment.candidate_groups {
        properties.candidate_groups = strings(bpmn, groups)?;
    }
    if let Some(users) = &assignment.candidate_users {
        properties.candidate_users = strings(bpmn, users)?;
    }
    if let Some(due) = &task.schedule.due_date {
        properties.due_date = date_time(bpmn, due)?;
    }
    if let Some(follow_up) = &task.schedule.follow_up_date {
        properties.follow_up_date = date_time(bpmn, follow_up)?;
    }
    if let Some(form) = &task.form {
        if let Some(form_id) = &form.form_id {
            properties.form_key = linked_form(
                bpmn,
                form_id,
                form.binding_type,
                form.version_tag.as_deref(),
            )?;
        }
        if let Some(reference) = &form.external_reference {
            properties.external_form_reference = string(bpmn, reference)?;
        }
    }
    if let Some(priority) = &task.priority {
        properties.priority = match priority {
            ExprOrStatic::Static(value) => *value,
            ExprOrStatic::Expression(source) => number(bpmn, source)?,
        };
        if !(0..=100).contains(&properties.priority) {
            return Err(extract_value_error(format!(
                "Expected priority to be in the range [0,100] but was '{}'.",
                properties.priority
            )));
        }
    }
    Ok(properties)
}

/// The reserved headers of a job-worker user task's job, beside its own task headers.
pub(crate) fn job_headers(
    task: &UserTask,
    properties: &UserTaskProperties,
    mut headers: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut set = |name: &str, value: String| {
        if !value.is_empty() {
            headers.insert(name.to_string(), value);
        }
    };
    set(ASSIGNEE_HEADER, properties.assignee.clone());
    if !properties.candidate_groups.is_empty() {
        set(
            CANDIDATE_GROUPS_HEADER,
            list_literal(&properties.candidate_groups),
        );
    }
    if !properties.candidate_users.is_empty() {
        set(
            CANDIDATE_USERS_HEADER,
            list_literal(&properties.candidate_users),
        );
    }
    set(DUE_DATE_HEADER, properties.due_date.clone());
    set(FOLLOW_UP_DATE_HEADER, properties.follow_up_date.clone());
    let form_key = match task.form.as_ref().and_then(|f| f.form_key.clone()) {
        Some(key) => key,
        None if properties.form_key > 0 => properties.form_key.to_string(),
        None => String::new(),
    };
    set(FORM_KEY_HEADER, form_key);
    headers
}

/// A list as Zeebe writes it into a header: `["a","b"]`.
fn list_literal(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn string(bpmn: &BpmnElementContext<'_, '_, '_>, value: &ExprOrStatic<String>) -> Step<String> {
    match value {
        ExprOrStatic::Static(text) => Ok(text.clone()),
        ExprOrStatic::Expression(source) => match evaluate_expression(bpmn, source)? {
            (Value::String(text), _) => Ok(text.to_string()),
            (other, warnings) => Err(extract_value_error(wrong_type(
                &bpmn.process.expressions[source.id.index()],
                "STRING",
                &other,
                &warnings,
            ))),
        },
    }
}

fn strings(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    value: &ExprOrStatic<Vec<String>>,
) -> Step<Vec<String>> {
    let source = match value {
        ExprOrStatic::Static(items) => return Ok(items.clone()),
        ExprOrStatic::Expression(source) => source,
    };
    let expression = &bpmn.process.expressions[source.id.index()];
    match evaluate_expression(bpmn, source)? {
        (Value::List(items), _) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.to_string()),
                _ => Err(extract_value_error(format!(
                    "Expected result of the expression '{}' to be 'ARRAY' containing 'STRING' items, but was 'ARRAY' containing at least one non-'STRING' item.",
                    expression.source()
                ))),
            })
            .collect(),
        (other, warnings) => Err(extract_value_error(wrong_type(
            expression, "ARRAY", &other, &warnings,
        ))),
    }
}

fn number(bpmn: &BpmnElementContext<'_, '_, '_>, source: &FeelSource) -> Step<i32> {
    let expression = &bpmn.process.expressions[source.id.index()];
    match evaluate_expression(bpmn, source)? {
        (Value::Number(n), _) => n
            .to_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| {
                extract_value_error(format!(
                    "Expected result of the expression '{}' to be an integer, but was '{n}'.",
                    expression.source()
                ))
            }),
        (other, warnings) => Err(extract_value_error(wrong_type(
            expression, "NUMBER", &other, &warnings,
        ))),
    }
}

/// A due or follow-up date: a FEEL date and time with a zone, or text Zeebe reads as a zoned
/// date-time, printed as Zeebe prints one; null is no date.
fn date_time(bpmn: &BpmnElementContext<'_, '_, '_>, value: &ExprOrStatic<String>) -> Step<String> {
    let (text, source) = match value {
        ExprOrStatic::Static(text) => (text.clone(), text.clone()),
        ExprOrStatic::Expression(source) => {
            let expression = &bpmn.process.expressions[source.id.index()];
            match evaluate_expression(bpmn, source)? {
                (Value::Null, _) => return Ok(String::new()),
                (Value::DateTime(date_time), _) if date_time.zone.is_some() => {
                    return Ok(zoned_date_time(&date_time));
                }
                (Value::String(text), _) => (text.to_string(), expression.source().to_string()),
                (other, _) => {
                    return Err(extract_value_error(format!(
                        "Expected result of the expression '{}' to be one of '[DATE_TIME, STRING]', but was '{}'.",
                        expression.source(),
                        type_name(&other)
                    )));
                }
            }
        }
    };
    parse_zoned_date_time(&text)
        .map(|date_time| zoned_date_time(&date_time))
        .ok_or_else(|| {
            extract_value_error(format!(
                "Invalid date-time format '{text}' for expression '{source}'."
            ))
        })
}

/// ISO 8601 with an offset (`2023-11-14T22:13:20Z`, `...+01:00`) and optionally a region
/// (`...+01:00[Europe/Berlin]`, as Zeebe prints it).
fn parse_zoned_date_time(text: &str) -> Option<DateTime> {
    let text = text.trim();
    let parsed = match text.split_once('[') {
        Some((at, region)) => {
            let region = region.strip_suffix(']')?;
            let local = at
                .trim_end_matches('Z')
                .rsplit_once(['+', '-'])
                .filter(|(date, _)| date.contains('T'))
                .map_or(at, |(local, _)| local);
            beeline_feel::temporal::parse_date_time(&format!("{local}@{region}"), 0)?
        }
        None => beeline_feel::temporal::parse_date_time(text, 0)?,
    };
    parsed.zone.is_some().then_some(parsed)
}

/// A zoned date-time as Java's `ZonedDateTime.toString()` prints it, which is what Zeebe
/// stores: seconds only when not zero, a fraction in groups of three digits, the offset, and
/// the region in brackets when there is one.
pub(crate) fn zoned_date_time(value: &DateTime) -> String {
    let time = value.time;
    let mut out = format!("{}T{:02}:{:02}", value.date, time.hour(), time.minute());
    let (second, nano) = (time.second(), time.nano());
    if second != 0 || nano != 0 {
        out.push_str(&format!(":{second:02}"));
    }
    if nano != 0 {
        if nano % 1_000_000 == 0 {
            out.push_str(&format!(".{:03}", nano / 1_000_000));
        } else if nano % 1_000 == 0 {
            out.push_str(&format!(".{:06}", nano / 1_000));
        } else {
            out.push_str(&format!(".{nano:09}"));
        }
    }
    if let Some(zone) = value.zone {
        let _ = beeline_feel::temporal::write_offset(&mut out, zone.offset);
        if let Some(region) = zone.id {
            out.push_str(&format!("[{}]", region.name()));
        }
    }
    out
}

fn evaluate_expression(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    source: &FeelSource,
) -> Step<(Value, String)> {
    eval(bpmn, source.id, bpmn.key, None)
        .map_err(|failure| Failure::of_evaluation(failure, ErrorType::ExtractValueError))
}

/// The key of the form `form_id` as the binding type chooses it.
fn linked_form(
    bpmn: &BpmnElementContext<'_, '_, '_>,
    form_id: &str,
    binding: BindingType,
    version_tag: Option<&str>,
) -> Step<i64> {
    let forms = bpmn.ctx.state().forms();
    let tenant = bpmn.process.tenant_id.as_str();
    let not_found = |message: String| Failure::Incident(ErrorType::FormNotFound, message);
    match binding {
        BindingType::Latest => match forms.latest(tenant, form_id)? {
            Some((_, key)) => Ok(key),
            None => Err(not_found(format!(
                "Expected to find a form with id '{form_id}', but no form with this id is found, at least a form with this id should be available. To resolve the Incident please deploy a form with the same id"
            ))),
        },
        BindingType::Deployment => {
            let deployment = bpmn.process.deployment_key;
            match forms.latest_matching(tenant, form_id, |f| f.deployment_key == deployment)? {
                Some(form) => Ok(form.form_key),
                None => Err(not_found(format!(
                    "Expected to use a form with id '{form_id}' with binding type 'deployment', but no such form found in the deployment with key {deployment} which contained the current process. To resolve this incident, migrate the process instance to a process definition that is deployed together with the intended form to use."
                ))),
            }
        }
        BindingType::VersionTag => {
            let tag = version_tag.unwrap_or_default();
            match forms.latest_matching(tenant, form_id, |f| f.version_tag == tag)? {
                Some(form) => Ok(form.form_key),
                None => Err(not_found(format!(
                    "Expected to use a form with id '{form_id}' and version tag '{tag}', but no such form found. To resolve the incident, deploy a form with the given id and version tag."
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(text: &str) -> String {
        zoned_date_time(&parse_zoned_date_time(text).unwrap())
    }

    #[test]
    fn zoned_date_times_print_as_zeebe_stores_them() {
        assert_eq!(printed("2023-11-14T22:13:00Z"), "2023-11-14T22:13Z");
        assert_eq!(printed("2023-11-14T22:13:20Z"), "2023-11-14T22:13:20Z");
        assert_eq!(
            printed("2023-11-14T22:13:20.5+01:00"),
            "2023-11-14T22:13:20.500+01:00"
        );
        assert_eq!(
            printed("2023-11-14T22:13:20.000123-05:30"),
            "2023-11-14T22:13:20.000123-05:30"
        );
        assert_eq!(
            printed("2023-07-01T10:00:00+02:00[Europe/Berlin]"),
            "2023-07-01T10:00+02:00[Europe/Berlin]"
        );
        assert!(
            parse_zoned_date_time("2023-11-14T22:13:20").is_none(),
            "no zone"
        );
        assert!(parse_zoned_date_time("tomorrow").is_none());
    }
}
