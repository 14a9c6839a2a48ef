//! The read side of the REST API: `POST /v2/<resource>/search`, `GET /v2/<resource>/{key}`,
//! definitions' XML, an instance's sequence flows and element statistics. Answered from
//! secondary storage (the node's `SearchStore`), never from the engine; eventually consistent
//! as Camunda's are.
//!
//! A search body is `{filter, sort, page}`. Each filter property is a value (equality) or an
//! object of the API's operators for its kind (`$eq`, `$neq`, `$exists`, `$in`, `$notIn`,
//! `$like` for strings; `$gt`, `$gte`, `$lt`, `$lte` for numbers and dates); process instances
//! also take `variables` and `$or`. Anything else (an unknown property, an operator the kind
//! does not have, a malformed cursor, a limit out of range) is 400 problem+json naming the
//! property.
//!
//! With multi-tenancy on, every read is limited to the caller's tenants: a search finds, and a
//! GET by key sees, only rows of the tenants the caller is assigned to.

use std::sync::Arc;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use beeline_search::query::{
    self, DECISION_DEFINITION_XML, DECISION_DEFINITIONS, DECISION_INSTANCES, DECISION_REQUIREMENTS,
    DECISION_REQUIREMENTS_XML, ELEMENT_INSTANCES, FORMS, INCIDENTS, JOBS, MAX_LIMIT,
    PROCESS_DEFINITION_START_FORM, PROCESS_DEFINITION_XML, PROCESS_DEFINITIONS, PROCESS_INSTANCES,
    SEQUENCE_FLOWS, USER_TASK_VARIABLES, USER_TASKS, VARIABLES,
};
use beeline_search::{
    Condition, Entity, Field, Kind, Op, Order, Page, Query, Results, SearchError, SearchStore,
    Value, cursor, time,
};
use serde_json::{Map, Value as Json};

use super::problem::Problem;
use super::{Call, Gateway, PathParam, Reply, answer, json};
use crate::tenancy;

/// Variable values longer than this are cut in search results (`isTruncated`); a GET by key
/// returns the whole value.
const PREVIEW_CHARS: usize = 8192;

/// The routes of the read side.
pub(super) fn routes() -> Router<Gateway> {
    let searches: [(&'static Entity, &'static str); 10] = [
        (&PROCESS_DEFINITIONS, "SearchProcessDefinitions"),
        (&PROCESS_INSTANCES, "SearchProcessInstances"),
        (&ELEMENT_INSTANCES, "SearchElementInstances"),
        (&VARIABLES, "SearchVariables"),
        (&INCIDENTS, "SearchIncidents"),
        (&JOBS, "SearchJobs"),
        (&DECISION_DEFINITIONS, "SearchDecisionDefinitions"),
        (&DECISION_REQUIREMENTS, "SearchDecisionRequirements"),
        (&DECISION_INSTANCES, "SearchDecisionInstances"),
        (&USER_TASKS, "SearchUserTasks"),
    ];
    let mut router = Router::new();
    for (entity, operation) in searches {
        router = router.route(
            &format!("/v2/{}/search", entity.name),
            post(
                move |State(d): State<Gateway>, query: RawQuery, call: Call| {
                    search(d, entity, operation, query, call, None)
                },
            ),
        );
    }
    let gets: [(&'static Entity, &'static str, &'static str); 9] = [
        (
            &PROCESS_DEFINITIONS,
            "processDefinitionKey",
            "GetProcessDefinition",
        ),
        (
            &PROCESS_INSTANCES,
            "processInstanceKey",
            "GetProcessInstance",
        ),
        (
            &ELEMENT_INSTANCES,
            "elementInstanceKey",
            "GetElementInstance",
        ),
        (&VARIABLES, "variableKey", "GetVariable"),
        (&INCIDENTS, "incidentKey", "GetIncident"),
        (
            &DECISION_DEFINITIONS,
            "decisionDefinitionKey",
            "GetDecisionDefinition",
        ),
        (
            &DECISION_REQUIREMENTS,
            "decisionRequirementsKey",
            "GetDecisionRequirements",
        ),
        (
            &DECISION_INSTANCES,
            "decisionEvaluationInstanceKey",
            "GetDecisionInstance",
        ),
        (&USER_TASKS, "userTaskKey", "GetUserTask"),
    ];
    for (entity, parameter, operation) in gets {
        router = router.route(
            &format!("/v2/{}/{{{parameter}}}", entity.name),
            get(
                move |State(d): State<Gateway>, PathParam(key): PathParam, call: Call| {
                    get_by_key(d, entity, parameter, operation, key, call)
                },
            ),
        );
    }
    router
        .route(
            "/v2/process-definitions/{processDefinitionKey}/xml",
            get(
                |State(d): State<Gateway>, PathParam(key): PathParam, call: Call| {
                    xml(
                        d,
                        &PROCESS_DEFINITION_XML,
                        "processDefinitionKey",
                        "GetProcessDefinitionXml",
                        key,
                        call,
                    )
                },
            ),
        )
        .route(
            "/v2/decision-definitions/{decisionDefinitionKey}/xml",
            get(
                |State(d): State<Gateway>, PathParam(key): PathParam, call: Call| {
                    xml(
                        d,
                        &DECISION_DEFINITION_XML,
                        "decisionDefinitionKey",
                        "GetDecisionDefinitionXml",
                        key,
                        call,
                    )
                },
            ),
        )
        .route(
            "/v2/decision-requirements/{decisionRequirementsKey}/xml",
            get(
                |State(d): State<Gateway>, PathParam(key): PathParam, call: Call| {
                    xml(
                        d,
                        &DECISION_REQUIREMENTS_XML,
                        "decisionRequirementsKey",
                        "GetDecisionRequirementsXml",
                        key,
                        call,
                    )
                },
            ),
        )
        .route("/v2/user-tasks/{userTaskKey}/form", get(user_task_form))
        .route(
            "/v2/process-definitions/{processDefinitionKey}/form",
            get(start_form),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/sequence-flows",
            get(sequence_flows),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/statistics/element-instances",
            get(instance_statistics),
        )
        .route(
            "/v2/process-definitions/{processDefinitionKey}/statistics/element-instances",
            post(definition_statistics),
        )
        .route(
            "/v2/user-tasks/{userTaskKey}/variables/search",
            post(user_task_variables),
        )
        .route(
            "/v2/process-instances/{processInstanceKey}/incidents/search",
            post(
                |State(d): State<Gateway>,
                 PathParam(key): PathParam,
                 query: RawQuery,
                 call: Call| async move {
                    let scope = json::path_key("processInstanceKey", &key).map(|key| {
                        Condition::Field(
                            INCIDENTS
                                .field("processInstanceKey")
                                .unwrap_or(INCIDENTS.key_field()),
                            Op::Eq(Value::Int(key)),
                        )
                    });
                    search(
                        d,
                        &INCIDENTS,
                        "SearchProcessInstanceIncidents",
                        query,
                        call,
                        Some(scope),
                    )
                    .await
                },
            ),
        )
}

/// The store, or why there is none.
fn store(d: &Gateway) -> Result<Arc<dyn SearchStore>, Problem> {
    d.search.clone().ok_or_else(|| {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "This node runs without secondary storage (--secondary-storage none), which \
             searches and reads by key are answered from; start it with --secondary-storage \
             embedded or postgres",
        )
    })
}

fn store_problem(error: SearchError) -> Problem {
    match error {
        SearchError::Unavailable(reason) => {
            Problem::new(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", reason)
        }
        SearchError::Internal(reason) => {
            Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", reason)
        }
    }
}

async fn search(
    d: Gateway,
    entity: &'static Entity,
    operation: &'static str,
    RawQuery(parameters): RawQuery,
    call: Call,
    scope: Option<Result<Condition, Problem>>,
) -> Response {
    answer(&d, operation, &call.path, async {
        let store = store(&d)?;
        let body: Json = if call.body.iter().all(u8::is_ascii_whitespace) {
            Json::Object(Map::new())
        } else {
            serde_json::from_slice(&call.body)
                .map_err(|e| Problem::invalid(format!("The request body is not valid JSON: {e}")))?
        };
        let mut query = parse_search(entity, &body)?;
        if let Some(scope) = scope {
            query.conditions.push(scope?);
        }
        query.conditions.extend(tenant_scope(entity)?);
        let truncate = !parameters
            .as_deref()
            .is_some_and(|q| q.split('&').any(|p| p == "truncateValues=false"));
        let results = store.search(query.clone()).await.map_err(store_problem)?;
        Ok(Reply::Json(json::to_vec(&page_body(
            &query, &results, truncate,
        ))))
    })
    .await
}

async fn get_by_key(
    d: Gateway,
    entity: &'static Entity,
    parameter: &'static str,
    operation: &'static str,
    key: String,
    call: Call,
) -> Response {
    answer(&d, operation, &call.path, async {
        let store = store(&d)?;
        let value = path_value(entity, parameter, &key)?;
        let results = store
            .search(visible_by_key(entity, value)?)
            .await
            .map_err(store_problem)?;
        let Some(row) = results.rows.first() else {
            return Err(not_found(entity, &key));
        };
        Ok(Reply::Json(json::to_vec(&item(entity, row, false))))
    })
    .await
}

/// The caller's tenants as a condition on the entity's `tenantId`, when multi-tenancy is on.
fn tenant_scope(entity: &'static Entity) -> Result<Option<Condition>, Problem> {
    let Some(tenants) = tenancy::readable() else {
        return Ok(None);
    };
    let field = entity.field("tenantId").ok_or_else(|| {
        Problem::from(crate::error::GatewayError::Internal(format!(
            "{} have no tenant to limit the read to",
            entity.name
        )))
    })?;
    let tenants = tenants.iter().map(|t| Value::text(t.as_str())).collect();
    Ok(Some(Condition::Field(field, Op::In(tenants))))
}

/// The row with this key, if the caller may see it.
fn visible_by_key(entity: &'static Entity, key: Value) -> Result<Query, Problem> {
    let mut query = Query::by_key(entity, key);
    query.conditions.extend(tenant_scope(entity)?);
    Ok(query)
}

/// A path's key: digits for a key field, any text for a text key (decision instances).
fn path_value(entity: &Entity, parameter: &str, key: &str) -> Result<Value, Problem> {
    match entity.key_field().kind {
        Kind::Key => json::path_key(parameter, key).map(Value::Int),
        _ => Ok(Value::text(key)),
    }
}

fn not_found(entity: &Entity, key: &str) -> Problem {
    Problem::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!(
            "No {} with key '{key}' found (searches are eventually consistent: a new one may \
             take a moment to appear)",
            entity.name.trim_end_matches('s').replace('-', " ")
        ),
    )
}

async fn xml(
    d: Gateway,
    entity: &'static Entity,
    parameter: &'static str,
    operation: &'static str,
    key: String,
    call: Call,
) -> Response {
    let mut text = None;
    let response = answer(&d, operation, &call.path, async {
        let store = store(&d)?;
        let value = path_value(entity, parameter, &key)?;
        let results = store
            .search(visible_by_key(entity, value)?)
            .await
            .map_err(store_problem)?;
        let Some(row) = results.rows.first() else {
            return Err(not_found(entity, &key));
        };
        text = match row.get(1) {
            Some(Value::Text(xml)) if !xml.is_empty() => Some(xml.clone()),
            _ => None,
        };
        Ok(Reply::NoContent)
    })
    .await;
    if response.status() != StatusCode::NO_CONTENT {
        return response;
    }
    match text {
        Some(xml) => {
            let mut response = (StatusCode::OK, xml).into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/xml"));
            response
        }
        None => response,
    }
}

/// `GET /v2/user-tasks/{userTaskKey}/form`: the linked form the engine resolved for the task
/// when it created it (its `formKey`); 204 for a task without one.
async fn user_task_form(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "GetUserTaskForm", &call.path, async {
        let store = store(&d)?;
        let value = path_value(&USER_TASKS, "userTaskKey", &key)?;
        let results = store
            .search(visible_by_key(&USER_TASKS, value)?)
            .await
            .map_err(store_problem)?;
        let Some(row) = results.rows.first() else {
            return Err(not_found(&USER_TASKS, &key));
        };
        let form_key = match cell(&USER_TASKS, row, "formKey") {
            Some(Value::Int(form_key)) if *form_key > 0 => *form_key,
            _ => return Ok(Reply::NoContent),
        };
        let mut query = visible_by_key(&FORMS, Value::Int(form_key))?;
        query.conditions.push(not_deleted());
        form(store.as_ref(), query, || {
            format!("the form with key '{form_key}' of user task '{key}'")
        })
        .await
    })
    .await
}

/// `GET /v2/process-definitions/{processDefinitionKey}/form`: the form the start event links
/// (`zeebe:formDefinition formId`), in the version its `bindingType` names: the latest of the
/// definition's tenant, the one deployed with the definition, or the latest with its
/// `versionTag`; 204 for a definition without one.
async fn start_form(State(d): State<Gateway>, PathParam(key): PathParam, call: Call) -> Response {
    let entity = &PROCESS_DEFINITION_START_FORM;
    answer(&d, "GetStartProcessForm", &call.path, async {
        let store = store(&d)?;
        let value = path_value(entity, "processDefinitionKey", &key)?;
        let results = store
            .search(visible_by_key(entity, value)?)
            .await
            .map_err(store_problem)?;
        let Some(row) = results.rows.first() else {
            return Err(not_found(entity, &key));
        };
        let Some(Value::Text(form_id)) = cell(entity, row, "formId") else {
            return Ok(Reply::NoContent);
        };
        let text = |name| match cell(entity, row, name) {
            Some(Value::Text(text)) => Some(text.clone()),
            _ => None,
        };
        let mut query = Query::new(&FORMS);
        let mut eq = |name, value| {
            if let Some(field) = FORMS.field(name) {
                query
                    .conditions
                    .push(Condition::Field(field, Op::Eq(value)));
            }
        };
        eq("formId", Value::text(form_id.as_str()));
        eq(
            "tenantId",
            Value::text(text("tenantId").unwrap_or_default()),
        );
        let binding = text("bindingType").unwrap_or_default();
        match binding.as_str() {
            "deployment" => match cell(entity, row, "deploymentKey") {
                Some(Value::Int(deployment)) => eq("deploymentKey", Value::Int(*deployment)),
                // Exported before the store kept deployments: none matches.
                _ => eq("deploymentKey", Value::Int(-1)),
            },
            "versionTag" => eq(
                "versionTag",
                Value::text(text("versionTag").unwrap_or_default()),
            ),
            _ => {}
        }
        query.conditions.push(not_deleted());
        query.conditions.extend(tenant_scope(&FORMS)?);
        if let Some(version) = FORMS.field("version") {
            query.sort.push((version, Order::Desc));
        }
        query.page = Page::Offset { from: 0, limit: 1 };
        form(store.as_ref(), query, || {
            format!("the form '{form_id}' ({binding} binding) of process definition '{key}'")
        })
        .await
    })
    .await
}

/// A cell of a row of `entity`'s items, by field name.
fn cell<'a>(entity: &Entity, row: &'a [Value], name: &str) -> Option<&'a Value> {
    entity
        .items()
        .zip(row)
        .find(|(field, _)| field.name == name)
        .map(|(_, value)| value)
}

fn not_deleted() -> Condition {
    let field = FORMS.field("deleted").unwrap_or(FORMS.key_field());
    Condition::Field(field, Op::Eq(Value::Int(0)))
}

/// The first form `query` finds as a `FormResult`, or 404 naming `what`.
async fn form(
    store: &dyn SearchStore,
    query: Query,
    what: impl FnOnce() -> String,
) -> Result<Reply, Problem> {
    let results = store.search(query).await.map_err(store_problem)?;
    match results.rows.first() {
        Some(row) => Ok(Reply::Json(json::to_vec(&item(&FORMS, row, false)))),
        None => Err(Problem::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!(
                "{} is not deployed, or not searchable yet (searches are eventually consistent)",
                what()
            ),
        )),
    }
}

async fn sequence_flows(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "GetProcessInstanceSequenceFlows", &call.path, async {
        let store = store(&d)?;
        let key = json::path_key("processInstanceKey", &key)?;
        let mut query = Query::new(&SEQUENCE_FLOWS);
        if let Some(field) = SEQUENCE_FLOWS.field("processInstanceKey") {
            query
                .conditions
                .push(Condition::Field(field, Op::Eq(Value::Int(key))));
        }
        query.conditions.extend(tenant_scope(&SEQUENCE_FLOWS)?);
        query.page = Page::Offset {
            from: 0,
            limit: MAX_LIMIT,
        };
        let results = store.search(query).await.map_err(store_problem)?;
        let items: Vec<Json> = results
            .rows
            .iter()
            .map(|row| item(&SEQUENCE_FLOWS, row, false))
            .collect();
        Ok(Reply::Json(json::to_vec(
            &serde_json::json!({ "items": items }),
        )))
    })
    .await
}

/// The process instances whose `field` (their key, or their definition's) is `key`.
fn of_instances(field: &str, key: i64) -> Query {
    let mut query = Query::new(&PROCESS_INSTANCES);
    if let Some(field) = PROCESS_INSTANCES.field(field) {
        query
            .conditions
            .push(Condition::Field(field, Op::Eq(Value::Int(key))));
    }
    query
}

async fn instance_statistics(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "GetProcessInstanceStatistics", &call.path, async {
        let store = store(&d)?;
        let key = json::path_key("processInstanceKey", &key)?;
        if tenancy::readable().is_some() {
            let instance = store
                .search(visible_by_key(&PROCESS_INSTANCES, Value::Int(key))?)
                .await
                .map_err(store_problem)?;
            if instance.rows.is_empty() {
                return Err(not_found(&PROCESS_INSTANCES, &key.to_string()));
            }
        }
        let mut query = of_instances("processInstanceKey", key);
        query.conditions.extend(tenant_scope(&PROCESS_INSTANCES)?);
        element_statistics(store, query).await
    })
    .await
}

/// `{"filter": {...}}`: the definition's instances that match a process instance filter.
async fn definition_statistics(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    call: Call,
) -> Response {
    answer(&d, "GetProcessDefinitionStatistics", &call.path, async {
        let store = store(&d)?;
        let key = json::path_key("processDefinitionKey", &key)?;
        let mut query = of_instances("processDefinitionKey", key);
        query.conditions.extend(tenant_scope(&PROCESS_INSTANCES)?);
        if !call.body.iter().all(u8::is_ascii_whitespace) {
            let body: Json = serde_json::from_slice(&call.body).map_err(|e| {
                Problem::invalid(format!("The request body is not valid JSON: {e}"))
            })?;
            let Json::Object(body) = body else {
                return Err(Problem::invalid(
                    "The request body must be a JSON object ({...})",
                ));
            };
            for (name, value) in &body {
                if name != "filter" {
                    return Err(unknown(name, name, &["filter".to_owned()]));
                }
                query
                    .conditions
                    .extend(parse_filter(&PROCESS_INSTANCES, value, "filter")?);
            }
        }
        element_statistics(store, query).await
    })
    .await
}

/// The variables a user task sees (its element instance's scope and those around it, up to
/// its process instance), filtered by name.
async fn user_task_variables(
    State(d): State<Gateway>,
    PathParam(key): PathParam,
    query: RawQuery,
    call: Call,
) -> Response {
    let scope = async {
        let store = store(&d)?;
        let task = json::path_key("userTaskKey", &key)?;
        let results = store
            .search(visible_by_key(&USER_TASKS, Value::Int(task))?)
            .await
            .map_err(store_problem)?;
        let element_instance = USER_TASKS
            .items()
            .position(|f| f.name == "elementInstanceKey")
            .and_then(|i| results.rows.first()?.get(i).cloned());
        match element_instance {
            Some(Value::Int(element_instance)) => Ok(Condition::VisibleFrom(element_instance)),
            _ => Err(not_found(&USER_TASKS, &key)),
        }
    }
    .await;
    search(
        d,
        &USER_TASK_VARIABLES,
        "SearchUserTaskVariables",
        query,
        call,
        Some(scope),
    )
    .await
}

async fn element_statistics(
    store: Arc<dyn SearchStore>,
    instances: Query,
) -> Result<Reply, Problem> {
    let statistics = store
        .element_statistics(instances)
        .await
        .map_err(store_problem)?;
    {
        let items: Vec<Json> = statistics
            .into_iter()
            .map(|s| {
                serde_json::json!({
                    "elementId": s.element_id,
                    "active": s.active,
                    "canceled": s.canceled,
                    "incidents": s.incidents,
                    "completed": s.completed,
                })
            })
            .collect();
        Ok(Reply::Json(json::to_vec(
            &serde_json::json!({ "items": items }),
        )))
    }
}

/// Reads a search request body into a query.
pub(crate) fn parse_search(entity: &'static Entity, body: &Json) -> Result<Query, Problem> {
    let Json::Object(body) = body else {
        return Err(Problem::invalid(
            "The request body must be a JSON object ({...})",
        ));
    };
    let mut query = Query::new(entity);
    for (name, value) in body {
        match name.as_str() {
            "filter" => query.conditions = parse_filter(entity, value, "filter")?,
            "sort" => query.sort = parse_sort(entity, value)?,
            "page" => {}
            other => {
                return Err(unknown(
                    other,
                    other,
                    &["filter", "sort", "page"].map(String::from),
                ));
            }
        }
    }
    if let Some(page) = body.get("page") {
        query.page = parse_page(&query, page)?;
    }
    Ok(query)
}

fn unknown(path: &str, name: &str, known: &[String]) -> Problem {
    let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
    Problem::invalid(format!(
        "Request property [{path}] cannot be parsed: unknown field `{name}`, expected one of {}",
        known.join(", ")
    ))
}

fn invalid(path: &str, reason: impl std::fmt::Display) -> Problem {
    Problem::invalid(format!(
        "Request property [{path}] cannot be parsed: {reason}"
    ))
}

fn parse_filter(
    entity: &'static Entity,
    value: &Json,
    path: &str,
) -> Result<Vec<Condition>, Problem> {
    let filter = match value {
        Json::Null => return Ok(Vec::new()),
        Json::Object(filter) => filter,
        _ => return Err(invalid(path, "expected an object of filter properties")),
    };
    let mut conditions = Vec::new();
    for (name, value) in filter {
        let here = format!("{path}.{name}");
        if let Some((_, scope)) = entity.variable_filters.iter().find(|(n, _)| n == name) {
            conditions.extend(parse_variables(scope, value, &here)?);
            continue;
        }
        if entity.or && name == "$or" {
            let Json::Array(groups) = value else {
                return Err(invalid(&here, "expected an array of filters"));
            };
            let groups = groups
                .iter()
                .enumerate()
                .map(|(i, group)| parse_filter(entity, group, &format!("{here}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            if !groups.is_empty() {
                conditions.push(Condition::Or(groups));
            }
            continue;
        }
        let Some(field) = entity.field(name).filter(|f| f.filter) else {
            let mut known: Vec<String> = entity
                .fields
                .iter()
                .filter(|f| f.filter)
                .map(|f| f.name.to_owned())
                .collect();
            known.extend(entity.variable_filters.iter().map(|(n, _)| (*n).to_owned()));
            if entity.or {
                known.push("$or".to_owned());
            }
            return Err(unknown(&here, name, &known));
        };
        if value.is_null() {
            continue;
        }
        for op in parse_ops(field.kind, value, &here)? {
            conditions.push(Condition::Field(field, op));
        }
    }
    Ok(conditions)
}

fn parse_variables(
    scope: &'static str,
    value: &Json,
    path: &str,
) -> Result<Vec<Condition>, Problem> {
    let Json::Array(variables) = value else {
        return Err(invalid(path, "expected an array of {name, value} filters"));
    };
    let mut conditions = Vec::new();
    for (i, variable) in variables.iter().enumerate() {
        let here = format!("{path}[{i}]");
        let Json::Object(variable) = variable else {
            return Err(invalid(&here, "expected an object {name, value}"));
        };
        for key in variable.keys() {
            if key != "name" && key != "value" {
                return Err(unknown(
                    &format!("{here}.{key}"),
                    key,
                    &["name".into(), "value".into()],
                ));
            }
        }
        let Some(Json::String(name)) = variable.get("name") else {
            return Err(Problem::invalid(format!("No {here}.name provided")));
        };
        let Some(value) = variable.get("value") else {
            return Err(Problem::invalid(format!("No {here}.value provided")));
        };
        for op in parse_ops(Kind::Str, value, &format!("{here}.value"))? {
            conditions.push(Condition::Variable(scope, name.clone(), op));
        }
    }
    Ok(conditions)
}

/// The operators each kind takes.
fn operators(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Str | Kind::Enum(_) | Kind::StrList => {
            &["$eq", "$neq", "$exists", "$in", "$notIn", "$like"]
        }
        Kind::Key => &["$eq", "$neq", "$exists", "$in", "$notIn"],
        Kind::Int | Kind::Date => &[
            "$eq", "$neq", "$exists", "$gt", "$gte", "$lt", "$lte", "$in",
        ],
        Kind::Bool => &["$eq", "$neq", "$exists"],
        Kind::Json => &[],
    }
}

fn parse_ops(kind: Kind, value: &Json, path: &str) -> Result<Vec<Op>, Problem> {
    // A list of strings for a list field (`tags`): all of them.
    if let (Kind::StrList, Json::Array(items)) = (kind, value) {
        return items
            .iter()
            .enumerate()
            .map(|(i, item)| parse_value(kind, item, &format!("{path}[{i}]")).map(Op::Eq))
            .collect();
    }
    let Json::Object(ops) = value else {
        return Ok(vec![Op::Eq(parse_value(kind, value, path)?)]);
    };
    let allowed = operators(kind);
    let mut parsed = Vec::new();
    for (op, operand) in ops {
        let here = format!("{path}.{op}");
        if !allowed.contains(&op.as_str()) {
            return Err(invalid(
                &here,
                format!(
                    "unknown operator `{op}`, expected one of {}",
                    allowed
                        .iter()
                        .map(|a| format!("`{a}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        let list = |operand: &Json| -> Result<Vec<Value>, Problem> {
            let Json::Array(items) = operand else {
                return Err(invalid(&here, "expected an array"));
            };
            items
                .iter()
                .enumerate()
                .map(|(i, item)| parse_value(kind, item, &format!("{here}[{i}]")))
                .collect()
        };
        parsed.push(match op.as_str() {
            "$eq" => Op::Eq(parse_value(kind, operand, &here)?),
            "$neq" => Op::Neq(parse_value(kind, operand, &here)?),
            "$exists" => match operand {
                Json::Bool(b) => Op::Exists(*b),
                _ => return Err(invalid(&here, "expected true or false")),
            },
            // An empty list asks for nothing, as Camunda reads it: CamundaClient sends
            // `"$in": [], "$notIn": []` beside every `$eq` it sets.
            "$in" | "$notIn" if matches!(operand, Json::Array(items) if items.is_empty()) => {
                continue;
            }
            "$in" => Op::In(list(operand)?),
            "$notIn" => Op::NotIn(list(operand)?),
            "$like" => match operand {
                Json::String(pattern) => Op::Like(pattern.clone()),
                _ => {
                    return Err(invalid(
                        &here,
                        "expected a pattern string (`*` and `?` wildcards)",
                    ));
                }
            },
            "$gt" => Op::Gt(parse_value(kind, operand, &here)?),
            "$gte" => Op::Gte(parse_value(kind, operand, &here)?),
            "$lt" => Op::Lt(parse_value(kind, operand, &here)?),
            _ => Op::Lte(parse_value(kind, operand, &here)?),
        });
    }
    Ok(parsed)
}

fn parse_value(kind: Kind, value: &Json, path: &str) -> Result<Value, Problem> {
    match (kind, value) {
        (Kind::Str | Kind::StrList, Json::String(s)) => Ok(Value::text(s.as_str())),
        (Kind::Enum(values), Json::String(s)) => {
            if values.contains(&s.as_str()) {
                Ok(Value::text(s.as_str()))
            } else {
                Err(invalid(
                    path,
                    format!(
                        "unknown value `{s}`, expected one of {}",
                        values
                            .iter()
                            .map(|v| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        }
        (Kind::Key, Json::String(s)) => s.parse::<i64>().map(Value::Int).map_err(|_| {
            invalid(
                path,
                format!("'{s}' is not a valid key. Expected a numeric value"),
            )
        }),
        (Kind::Key | Kind::Int, Json::Number(n)) => n
            .as_i64()
            .map(Value::Int)
            .ok_or_else(|| invalid(path, format!("{n} is not a whole number"))),
        (Kind::Date, Json::String(s)) => time::parse(s).map(Value::Int).ok_or_else(|| {
            invalid(
                path,
                format!("'{s}' cannot be parsed as a date according to RFC 3339, section 5.6"),
            )
        }),
        (Kind::Bool, Json::Bool(b)) => Ok(Value::bool(*b)),
        (kind, other) => Err(invalid(
            path,
            format!(
                "invalid type: {}, expected {}",
                json_type(other),
                match kind {
                    Kind::Str | Kind::Enum(_) | Kind::StrList => "a string",
                    Kind::Key => "a key (a string of digits)",
                    Kind::Int => "an integer",
                    Kind::Date => "an RFC 3339 date-time string",
                    Kind::Bool => "a boolean",
                    Kind::Json => "nothing: it cannot be filtered",
                }
            ),
        )),
    }
}

fn json_type(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn parse_sort(
    entity: &'static Entity,
    value: &Json,
) -> Result<Vec<(&'static Field, Order)>, Problem> {
    let Json::Array(sorts) = value else {
        return Err(invalid("sort", "expected an array of {field, order}"));
    };
    let mut sort = Vec::new();
    for (i, entry) in sorts.iter().enumerate() {
        let here = format!("sort[{i}]");
        let Json::Object(entry) = entry else {
            return Err(invalid(&here, "expected an object {field, order}"));
        };
        for key in entry.keys() {
            if key != "field" && key != "order" {
                return Err(unknown(
                    &format!("{here}.{key}"),
                    key,
                    &["field".into(), "order".into()],
                ));
            }
        }
        let Some(Json::String(name)) = entry.get("field") else {
            return Err(Problem::invalid(format!("No {here}.field provided")));
        };
        let Some(field) = entity.field(name).filter(|f| f.sort) else {
            let known: Vec<String> = entity
                .fields
                .iter()
                .filter(|f| f.sort)
                .map(|f| f.name.to_owned())
                .collect();
            return Err(invalid(
                &format!("{here}.field"),
                format!(
                    "unknown sort field `{name}`, expected one of {}",
                    known
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let order = match entry.get("order") {
            None | Some(Json::Null) => Order::Asc,
            Some(Json::String(o)) if o.eq_ignore_ascii_case("asc") => Order::Asc,
            Some(Json::String(o)) if o.eq_ignore_ascii_case("desc") => Order::Desc,
            Some(other) => {
                return Err(invalid(
                    &format!("{here}.order"),
                    format!("unknown order {other}, expected `ASC` or `DESC`"),
                ));
            }
        };
        sort.push((field, order));
    }
    Ok(sort)
}

fn parse_page(query: &Query, value: &Json) -> Result<Page, Problem> {
    let Json::Object(page) = value else {
        return Err(invalid(
            "page",
            "expected an object {limit, from | after | before}",
        ));
    };
    let known = ["limit", "from", "after", "before"].map(String::from);
    for key in page.keys() {
        if !known.contains(key) {
            return Err(unknown(&format!("page.{key}"), key, &known));
        }
    }
    let limit = match page.get("limit") {
        None | Some(Json::Null) => query::DEFAULT_LIMIT,
        Some(Json::Number(n)) => match n.as_u64() {
            Some(limit) if (1..=MAX_LIMIT).contains(&limit) => limit,
            _ => {
                return Err(invalid(
                    "page.limit",
                    format!("{n} is out of range, expected 1 to {MAX_LIMIT}"),
                ));
            }
        },
        Some(other) => {
            return Err(invalid(
                "page.limit",
                format!("invalid type: {}, expected an integer", json_type(other)),
            ));
        }
    };
    let given: Vec<&str> = ["from", "after", "before"]
        .into_iter()
        .filter(|k| page.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    if given.len() > 1 {
        return Err(Problem::invalid(format!(
            "Only one of [page.from, page.after, page.before] is allowed; got {}",
            given.join(", ")
        )));
    }
    let sort_len = query.full_sort().len();
    let cursor = |name: &str| -> Result<Vec<Value>, Problem> {
        match page.get(name) {
            Some(Json::String(text)) => cursor::decode(text, sort_len).ok_or_else(|| {
                invalid(
                    &format!("page.{name}"),
                    format!(
                        "'{text}' is not a cursor of this search (use the startCursor or \
                         endCursor of a page with the same sort)"
                    ),
                )
            }),
            _ => Err(invalid(&format!("page.{name}"), "expected a cursor string")),
        }
    };
    Ok(match given.first() {
        Some(&"after") => Page::After {
            cursor: cursor("after")?,
            limit,
        },
        Some(&"before") => Page::Before {
            cursor: cursor("before")?,
            limit,
        },
        Some(_) => match page.get("from") {
            Some(Json::Number(n)) if n.as_u64().is_some() => Page::Offset {
                from: n.as_u64().unwrap_or(0),
                limit,
            },
            Some(other) => {
                return Err(invalid(
                    "page.from",
                    format!("{other} is not a whole number of at least 0"),
                ));
            }
            None => Page::Offset { from: 0, limit },
        },
        None => Page::Offset { from: 0, limit },
    })
}

/// The response of a search.
fn page_body(query: &Query, results: &Results, truncate: bool) -> Json {
    let items: Vec<Json> = results
        .rows
        .iter()
        .map(|row| item(query.entity, row, truncate))
        .collect();
    let mut page = Map::new();
    page.insert("totalItems".into(), Json::from(results.total));
    page.insert(
        "hasMoreTotalItems".into(),
        Json::Bool(results.has_more_total),
    );
    if let (Some(first), Some(last)) = (results.sort_values.first(), results.sort_values.last()) {
        page.insert("startCursor".into(), Json::String(cursor::encode(first)));
        page.insert("endCursor".into(), Json::String(cursor::encode(last)));
    }
    serde_json::json!({ "items": items, "page": page })
}

/// One row as the API shows it: keys as strings, dates as RFC 3339 text, absent cells left
/// out.
fn item(entity: &Entity, row: &[Value], truncate: bool) -> Json {
    let mut object = Map::new();
    let mut truncated = false;
    for (field, value) in entity.items().zip(row) {
        let json = match (field.kind, value) {
            (_, Value::Null) => continue,
            (Kind::Key, Value::Int(key)) => Json::String(key.to_string()),
            (Kind::Date, Value::Int(ms)) => Json::String(time::format(*ms)),
            (Kind::Bool, Value::Int(b)) => Json::Bool(*b != 0),
            (Kind::Json | Kind::StrList, Value::Text(text)) => {
                serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.clone()))
            }
            (_, Value::Int(n)) => Json::from(*n),
            (_, Value::Text(text)) => {
                if entity.name == "variables" && field.name == "value" && truncate {
                    let mut chars = text.char_indices();
                    if let Some((cut, _)) = chars.nth(PREVIEW_CHARS) {
                        truncated = true;
                        Json::String(text[..cut].to_owned())
                    } else {
                        Json::String(text.clone())
                    }
                } else {
                    Json::String(text.clone())
                }
            }
        };
        object.insert(field.name.to_owned(), json);
    }
    if entity.name == "variables" {
        object.insert("isTruncated".into(), Json::Bool(truncated));
    }
    Json::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(entity: &'static Entity, body: Json) -> Result<Query, String> {
        parse_search(entity, &body).map_err(|p| p.detail)
    }

    #[test]
    fn every_operator_reads_into_the_query() {
        let query = parse(
            &PROCESS_INSTANCES,
            json!({"filter": {
                "processDefinitionId": "order",
                "state": {"$in": ["ACTIVE", "COMPLETED"], "$neq": "TERMINATED"},
                "processInstanceKey": {"$notIn": ["1"], "$exists": true},
                "tenantId": {"$like": "t*"},
                "startDate": {"$gt": "2026-01-01T00:00:00Z", "$gte": "2026-01-01T00:00:00Z",
                              "$lt": "2027-01-01T00:00:00Z", "$lte": "2027-01-01T00:00:00Z"},
                "processDefinitionVersion": {"$eq": 2},
                "hasIncident": false,
                "variables": [{"name": "region", "value": "\"EMEA\""}],
                "$or": [{"processDefinitionId": "a"}, {"processDefinitionId": {"$like": "b*"}}]
            }}),
        )
        .unwrap();
        let ops: Vec<String> = query
            .conditions
            .iter()
            .map(|c| match c {
                Condition::Field(f, op) => format!("{} {op:?}", f.name),
                Condition::Variable(_, name, op) => format!("variable {name} {op:?}"),
                Condition::Or(groups) => format!("or {}", groups.len()),
                Condition::VisibleFrom(key) => format!("visible from {key}"),
            })
            .collect();
        for expected in [
            r#"processDefinitionId Eq(Text("order"))"#,
            r#"state In([Text("ACTIVE"), Text("COMPLETED")])"#,
            r#"state Neq(Text("TERMINATED"))"#,
            "processInstanceKey NotIn([Int(1)])",
            "processInstanceKey Exists(true)",
            r#"tenantId Like("t*")"#,
            "startDate Gt(Int(1767225600000))",
            "startDate Gte(Int(1767225600000))",
            "startDate Lt(Int(1798761600000))",
            "startDate Lte(Int(1798761600000))",
            "processDefinitionVersion Eq(Int(2))",
            "hasIncident Eq(Int(0))",
            r#"variable region Eq(Text("\"EMEA\""))"#,
            "or 2",
        ] {
            assert!(ops.contains(&expected.to_owned()), "{expected} in {ops:?}");
        }
    }

    #[test]
    fn sorts_and_pages_read_into_the_query() {
        let query = parse(
            &INCIDENTS,
            json!({"sort": [{"field": "creationTime", "order": "DESC"}, {"field": "errorType"}],
                   "page": {"from": 20, "limit": 5}}),
        )
        .unwrap();
        assert_eq!(query.sort.len(), 2);
        assert_eq!(query.sort[0].1, Order::Desc);
        assert_eq!(query.sort[1].1, Order::Asc);
        assert_eq!(query.page, Page::Offset { from: 20, limit: 5 });
        let cursor = cursor::encode(&[Value::Int(7), Value::Int(9)]);
        let query = parse(
            &INCIDENTS,
            json!({"sort": [{"field": "creationTime"}], "page": {"after": cursor, "limit": 2}}),
        )
        .unwrap();
        assert_eq!(
            query.page,
            Page::After {
                cursor: vec![Value::Int(7), Value::Int(9)],
                limit: 2
            }
        );
        let query = parse(
            &JOBS,
            json!({"page": {"before": cursor::encode(&[Value::Int(3)])}}),
        )
        .unwrap();
        assert_eq!(
            query.page,
            Page::Before {
                cursor: vec![Value::Int(3)],
                limit: 100
            }
        );
    }

    #[test]
    fn bad_queries_are_refused_naming_what_is_wrong() {
        for (body, expected) in [
            (
                json!({"filter": {"color": "red"}}),
                "Request property [filter.color] cannot be parsed: unknown field `color`",
            ),
            (
                json!({"filter": {"state": {"$gt": "ACTIVE"}}}),
                "Request property [filter.state.$gt] cannot be parsed: unknown operator `$gt`",
            ),
            (
                json!({"filter": {"state": "RUNNING"}}),
                "Request property [filter.state] cannot be parsed: unknown value `RUNNING`",
            ),
            (
                json!({"filter": {"processInstanceKey": "abc"}}),
                "Request property [filter.processInstanceKey] cannot be parsed: 'abc' is not a valid key",
            ),
            (
                json!({"filter": {"startDate": {"$gte": "yesterday"}}}),
                "Request property [filter.startDate.$gte] cannot be parsed: 'yesterday' cannot be parsed as a date",
            ),
            (
                json!({"filter": {"state": {"$in": "ACTIVE"}}}),
                "Request property [filter.state.$in] cannot be parsed: expected an array",
            ),
            (
                json!({"page": {"after": "bm90IGEgY3Vyc29y"}}),
                "Request property [page.after] cannot be parsed: 'bm90IGEgY3Vyc29y' is not a cursor",
            ),
            (
                json!({"page": {"after": "%%%"}}),
                "Request property [page.after] cannot be parsed: '%%%' is not a cursor",
            ),
            (
                json!({"page": {"limit": 0}}),
                "Request property [page.limit] cannot be parsed: 0 is out of range",
            ),
            (
                json!({"page": {"from": 1, "after": "x"}}),
                "Only one of [page.from, page.after, page.before] is allowed",
            ),
            (
                json!({"sort": [{"field": "color"}]}),
                "Request property [sort[0].field] cannot be parsed: unknown sort field `color`",
            ),
            (
                json!({"sort": [{"field": "state", "order": "UP"}]}),
                "Request property [sort[0].order] cannot be parsed: unknown order",
            ),
            (
                json!({"query": {}}),
                "Request property [query] cannot be parsed: unknown field `query`",
            ),
            (
                json!({"filter": {"variables": [{"name": "x"}]}}),
                "No filter.variables[0].value provided",
            ),
        ] {
            let detail = parse(&PROCESS_INSTANCES, body.clone()).unwrap_err();
            assert!(detail.starts_with(expected), "{body}: {detail}");
        }
        let detail = parse(&VARIABLES, json!({"filter": {"$or": []}})).unwrap_err();
        assert!(detail.contains("unknown field `$or`"), "{detail}");
    }

    #[test]
    fn items_show_keys_as_strings_dates_as_text_and_leave_out_what_is_absent() {
        let row = vec![
            Value::Int(2251799813685249),
            Value::text("order"),
            Value::Null,
            Value::Int(1),
            Value::Null,
            Value::Int(2251799813685248),
            Value::Null,
            Value::Null,
            Value::Int(1_700_000_000_000),
            Value::Null,
            Value::text("ACTIVE"),
            Value::Int(1),
            Value::text("<default>"),
        ];
        assert_eq!(
            item(&PROCESS_INSTANCES, &row, true),
            json!({
                "processInstanceKey": "2251799813685249",
                "processDefinitionId": "order",
                "processDefinitionVersion": 1,
                "processDefinitionKey": "2251799813685248",
                "startDate": "2023-11-14T22:13:20.000Z",
                "state": "ACTIVE",
                "hasIncident": true,
                "tenantId": "<default>"
            })
        );
        let long = "x".repeat(PREVIEW_CHARS + 5);
        let variable = vec![
            Value::Int(1),
            Value::text("big"),
            Value::text(format!("\"{long}\"")),
            Value::Int(2),
            Value::Int(3),
            Value::text("<default>"),
        ];
        let searched = item(&VARIABLES, &variable, true);
        assert_eq!(searched["isTruncated"], json!(true));
        assert_eq!(
            searched["value"].as_str().map(str::len),
            Some(PREVIEW_CHARS)
        );
        let got = item(&VARIABLES, &variable, false);
        assert_eq!(got["isTruncated"], json!(false));
        assert_eq!(got["value"].as_str().map(str::len), Some(PREVIEW_CHARS + 7));
    }
}
